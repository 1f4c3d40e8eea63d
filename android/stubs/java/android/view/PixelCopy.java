package android.view;

public final class PixelCopy {
    public static final int SUCCESS = 0;
    public interface OnPixelCopyFinishedListener { void onPixelCopyFinished(int copyResult); }
    public static native void request(Window source, android.graphics.Rect srcRect, android.graphics.Bitmap dest, OnPixelCopyFinishedListener listener, android.os.Handler listenerThread);
}
