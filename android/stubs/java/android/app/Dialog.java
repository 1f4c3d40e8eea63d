package android.app;

public class Dialog {
    public Dialog(android.content.Context context) {}
    protected void onCreate(android.os.Bundle savedInstanceState) {}
    public native android.view.Window getWindow();
    public native void setContentView(android.view.View view);
    public native void setCancelable(boolean flag);
    public native void show();
    public native void dismiss();
}
