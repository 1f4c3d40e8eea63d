package android.graphics;

public class PixelFormat {
    public static final int RGBA_8888 = 1;
}
