package android.os;

public class Handler {
    public Handler(Looper looper) {}
    public final native boolean post(Runnable r);
    public final native boolean postDelayed(Runnable r, long delayMillis);
    public final native void removeCallbacks(Runnable r);
}
