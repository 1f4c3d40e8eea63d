package android.media;

public class ImageReader implements AutoCloseable {
    public static native ImageReader newInstance(int width, int height, int format, int maxImages);
    public native android.view.Surface getSurface();
    public native Image acquireLatestImage();
    public native void setOnImageAvailableListener(OnImageAvailableListener listener, android.os.Handler handler);
    public native void close();
    public interface OnImageAvailableListener { void onImageAvailable(ImageReader reader); }
}
