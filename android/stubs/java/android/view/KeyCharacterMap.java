package android.view;

public class KeyCharacterMap {
    public static final int VIRTUAL_KEYBOARD = -1;
    public static native KeyCharacterMap load(int deviceId);
    public native KeyEvent[] getEvents(char[] chars);
}
