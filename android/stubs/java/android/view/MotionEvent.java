package android.view;

public final class MotionEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_SCROLL = 8;
    public static final int AXIS_VSCROLL = 9;
    public static final int TOOL_TYPE_FINGER = 1;
    public static final int TOOL_TYPE_MOUSE = 3;
    public static native MotionEvent obtain(long downTime, long eventTime, int action, int pointerCount, PointerProperties[] pointerProperties, PointerCoords[] pointerCoords, int metaState, int buttonState, float xPrecision, float yPrecision, int deviceId, int edgeFlags, int source, int flags);
    public native void recycle();
    public static final class PointerProperties {
        public PointerProperties() {}
        public int id;
        public int toolType;
    }
    public static final class PointerCoords {
        public PointerCoords() {}
        public float x;
        public float y;
        public float pressure;
        public float size;
        public native void setAxisValue(int axis, float value);
    }
}
