package android.widget;

public class EditText extends TextView {
    public EditText(android.content.Context context) { super(context); }
    public native android.text.Editable getText();
}
