package android.view;

public class View {
    public View(android.content.Context context) {}
    public static final int VISIBLE = 0;
    public static final int GONE = 8;
    public static final int LAYER_TYPE_NONE = 0;
    public static final int LAYER_TYPE_SOFTWARE = 1;
    public native android.content.Context getContext();
    public final native ViewParent getParent();
    public final native int getWidth();
    public final native int getHeight();
    public native void setVisibility(int visibility);
    public native int getVisibility();
    public native void setBackgroundColor(int color);
    public native void setClickable(boolean clickable);
    public native void setEnabled(boolean enabled);
    public native boolean isEnabled();
    public native boolean isClickable();
    public native void setFocusable(boolean focusable);
    public native boolean isFocusable();
    public native void setFocusableInTouchMode(boolean focusableInTouchMode);
    public final native boolean isFocusableInTouchMode();
    public final native boolean requestFocus();
    public native void clearFocus();
    public native void setElevation(float elevation);
    public native float getElevation();
    public native void setTranslationY(float translationY);
    public native float getTranslationY();
    public native ViewPropertyAnimator animate();
    public native android.os.IBinder getWindowToken();
    public native void getLocationInWindow(int[] outLocation);
    public native void setPadding(int left, int top, int right, int bottom);
    public native void setContentDescription(CharSequence contentDescription);
    public native CharSequence getContentDescription();
    public native void setOnClickListener(OnClickListener l);
    public native void setLayerType(int layerType, android.graphics.Paint paint);
    public native ViewGroup.LayoutParams getLayoutParams();
    public native void setLayoutParams(ViewGroup.LayoutParams params);
    public final native void measure(int widthMeasureSpec, int heightMeasureSpec);
    public native void layout(int l, int t, int r, int b);
    public native void draw(android.graphics.Canvas canvas);
    public native boolean dispatchTouchEvent(MotionEvent event);
    public native boolean dispatchGenericMotionEvent(MotionEvent event);
    public native boolean dispatchKeyEvent(KeyEvent event);
    public android.content.res.Resources getResources() { return null; }
    public interface OnClickListener { void onClick(View v); }
    public static class MeasureSpec {
        public static final int EXACTLY = 1 << 30;
        public static native int makeMeasureSpec(int size, int mode);
    }
}
