package android.view;

public class ViewConfiguration {
    public static native ViewConfiguration get(android.content.Context context);
    public native float getScaledVerticalScrollFactor();
}
