package android.view;

public abstract class Window {
    public native void setType(int type);
    public native void addFlags(int flags);
}
