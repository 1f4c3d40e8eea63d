package android.os;

public final class Looper {
    public static native Looper getMainLooper();
    public static native Looper myLooper();
}
