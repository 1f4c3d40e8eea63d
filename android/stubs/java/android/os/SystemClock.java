package android.os;

public final class SystemClock {
    public static native long uptimeMillis();
}
