package android.hardware.display;

public final class DisplayManager {
    public static final int VIRTUAL_DISPLAY_FLAG_PRESENTATION = 1 << 1;
    public native VirtualDisplay createVirtualDisplay(String name, int width, int height, int densityDpi, android.view.Surface surface, int flags);
}
