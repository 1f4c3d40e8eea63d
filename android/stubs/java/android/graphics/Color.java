package android.graphics;

public class Color {
    public static final int BLACK = 0xFF000000;
    public static final int WHITE = 0xFFFFFFFF;
    public static native int rgb(int red, int green, int blue);
    public static native int argb(int alpha, int red, int green, int blue);
}
