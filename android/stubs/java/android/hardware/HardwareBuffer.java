package android.hardware;

public final class HardwareBuffer implements AutoCloseable {
    public native int getFormat();
    public native void close();
}
