package android.view;

public abstract class ViewGroup extends View implements ViewParent {
    public ViewGroup(android.content.Context context) { super(context); }
    public native void addView(View child);
    public native void addView(View child, LayoutParams params);
    public native void addView(View child, int width, int height);
    public native void removeView(View view);
    public native void removeAllViews();
    public static class LayoutParams {
        public static final int MATCH_PARENT = -1;
        public static final int WRAP_CONTENT = -2;
        public int width;
        public int height;
        public LayoutParams(int width, int height) {}
    }
    public static class MarginLayoutParams extends LayoutParams {
        public int topMargin;
        public MarginLayoutParams(int width, int height) { super(width, height); }
        public native void setMargins(int left, int top, int right, int bottom);
    }
}
