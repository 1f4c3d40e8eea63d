package android.widget;

public class TextView extends android.view.View {
    public TextView(android.content.Context context) { super(context); }
    public final native void setText(CharSequence text);
    public native CharSequence getText();
    public native void setTextSize(int unit, float size);
    public native void setTextColor(int color);
    public native void setMaxLines(int maxLines);
    public native int getMaxLines();
    public final native void setHint(CharSequence hint);
    public native CharSequence getHint();
    public native void setInputType(int type);
    public native int getInputType();
}
