package android.view;

public class Gravity {
    public static final int CENTER_VERTICAL = 16;
}
