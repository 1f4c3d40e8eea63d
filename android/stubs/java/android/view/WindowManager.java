package android.view;

public interface WindowManager {
    public static class LayoutParams extends ViewGroup.LayoutParams {
        public LayoutParams() { super(0, 0); }
        public static final int TYPE_PRIVATE_PRESENTATION = 2030;
        public static final int FLAG_NOT_FOCUSABLE = 0x00000008;
    }
}
