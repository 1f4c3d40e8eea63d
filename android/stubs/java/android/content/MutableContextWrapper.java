package android.content;

public class MutableContextWrapper extends ContextWrapper {
    public MutableContextWrapper(Context base) { super(base); }
    public native void setBaseContext(Context base);
}
