package android.media;

public abstract class Image implements AutoCloseable {
    public abstract int getFormat();
    public abstract int getHeight();
    public abstract Plane[] getPlanes();
    public native android.hardware.HardwareBuffer getHardwareBuffer();
    public abstract void close();
    public abstract static class Plane {
        public abstract int getPixelStride();
        public abstract int getRowStride();
        public abstract java.nio.ByteBuffer getBuffer();
    }
}
