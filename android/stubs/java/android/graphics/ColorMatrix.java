package android.graphics;

public class ColorMatrix {
    public ColorMatrix(float[] src) {}
}
