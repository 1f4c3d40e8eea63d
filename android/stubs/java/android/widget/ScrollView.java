package android.widget;

public class ScrollView extends FrameLayout {
    public ScrollView(android.content.Context context) { super(context); }
}
