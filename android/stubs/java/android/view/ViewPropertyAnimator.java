package android.view;

public class ViewPropertyAnimator {
    public native ViewPropertyAnimator translationY(float value);
    public native ViewPropertyAnimator setDuration(long duration);
    public native ViewPropertyAnimator withEndAction(Runnable runnable);
    public native void start();
}
