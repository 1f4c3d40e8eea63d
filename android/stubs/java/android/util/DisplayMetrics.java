package android.util;

public class DisplayMetrics {
    public float density;
    public int densityDpi;
    public int widthPixels;
    public int heightPixels;
}
