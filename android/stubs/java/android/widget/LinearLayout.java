package android.widget;

public class LinearLayout extends android.view.ViewGroup {
    public static final int HORIZONTAL = 0;
    public static final int VERTICAL = 1;
    public LinearLayout(android.content.Context context) { super(context); }
    public native void setOrientation(int orientation);
    public native int getOrientation();
    public native void setGravity(int gravity);
    public native int getGravity();
    public static class LayoutParams extends android.view.ViewGroup.MarginLayoutParams {
        public LayoutParams(int width, int height) { super(width, height); }
        public LayoutParams(int width, int height, float weight) { super(width, height); }
    }
}
