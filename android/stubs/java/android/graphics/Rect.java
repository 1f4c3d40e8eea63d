package android.graphics;

public final class Rect {
    public Rect(int left, int top, int right, int bottom) {}
}
