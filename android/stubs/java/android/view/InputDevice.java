package android.view;

public final class InputDevice {
    public static final int SOURCE_TOUCHSCREEN = 0x00001002;
    public static final int SOURCE_MOUSE = 0x00002002;
}
