package android.hardware.display;

public final class VirtualDisplay {
    public native android.view.Display getDisplay();
    public native void release();
}
