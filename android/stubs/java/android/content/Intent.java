package android.content;

public class Intent {
    public static final String ACTION_VIEW = "android.intent.action.VIEW";
    public static final int FLAG_ACTIVITY_SINGLE_TOP = 0x20000000;
    public Intent(Context packageContext, Class<?> cls) {}
    public Intent(String action, android.net.Uri uri) {}
    public native Intent addFlags(int flags);
    public native String getAction();
    public native Intent setAction(String action);
}
