package android.util;

public final class Log {
    public static native int i(String tag, String msg);
    public static native int w(String tag, String msg);
    public static native int w(String tag, String msg, Throwable tr);
}
