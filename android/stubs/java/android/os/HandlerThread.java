package android.os;

public class HandlerThread extends Thread {
    public HandlerThread(String name) {}
    public native Looper getLooper();
    public native boolean quitSafely();
}
