package android.content.res;

public class Resources {
    public native android.util.DisplayMetrics getDisplayMetrics();
}
