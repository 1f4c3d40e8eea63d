package android.graphics;

public final class Bitmap {
    public enum Config { ARGB_8888 }
    public enum CompressFormat { JPEG, PNG }
    public static native Bitmap createBitmap(int width, int height, Config config);
    public static native Bitmap createScaledBitmap(Bitmap src, int dstWidth, int dstHeight, boolean filter);
    public native int getWidth();
    public native int getHeight();
    public native void recycle();
    public native boolean compress(CompressFormat format, int quality, java.io.OutputStream stream);
    public native void copyPixelsFromBuffer(java.nio.Buffer src);
}
