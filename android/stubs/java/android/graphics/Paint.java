package android.graphics;

public class Paint {
    public Paint() {}
    public native ColorFilter setColorFilter(ColorFilter filter);
    public native ColorFilter getColorFilter();
}
