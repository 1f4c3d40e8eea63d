package android.graphics;

public class Canvas {
    public Canvas(Bitmap bitmap) {}
    public native void drawBitmap(Bitmap bitmap, float left, float top, Paint paint);
}
