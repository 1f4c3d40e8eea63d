package android.view;

public class KeyEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int KEYCODE_ENTER = 66;
    public static final int KEYCODE_TAB = 61;
    public static final int KEYCODE_ESCAPE = 111;
    public static final int KEYCODE_DEL = 67;
    public static final int KEYCODE_FORWARD_DEL = 112;
    public static final int KEYCODE_DPAD_UP = 19;
    public static final int KEYCODE_DPAD_DOWN = 20;
    public static final int KEYCODE_DPAD_LEFT = 21;
    public static final int KEYCODE_DPAD_RIGHT = 22;
    public static final int KEYCODE_MOVE_HOME = 122;
    public static final int KEYCODE_MOVE_END = 123;
    public static final int KEYCODE_PAGE_UP = 92;
    public static final int KEYCODE_PAGE_DOWN = 93;
    public static final int KEYCODE_SPACE = 62;
    public static final int KEYCODE_A = 29;
    public static final int KEYCODE_INSERT = 124;
    public static final int KEYCODE_F1 = 131;
    public static final int KEYCODE_ALT_LEFT = 57;
    public static final int KEYCODE_SHIFT_LEFT = 59;
    public static final int KEYCODE_CTRL_LEFT = 113;
    public static final int KEYCODE_META_LEFT = 117;
    public static final int META_SHIFT_ON = 0x1;
    public static final int META_ALT_ON = 0x02;
    public static final int META_ALT_LEFT_ON = 0x10;
    public static final int META_SHIFT_LEFT_ON = 0x40;
    public static final int META_CTRL_ON = 0x1000;
    public static final int META_CTRL_LEFT_ON = 0x2000;
    public static final int META_META_ON = 0x10000;
    public static final int META_META_LEFT_ON = 0x20000;
    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat) {}
    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat, int metaState) {}
    public static native boolean isModifierKey(int keyCode);
    public final native int getKeyCode();
    public final native int getMetaState();
}
