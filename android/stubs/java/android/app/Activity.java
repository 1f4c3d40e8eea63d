package android.app;

public class Activity extends android.content.ContextWrapper {
    public Activity() { super(null); }
    protected void onCreate(android.os.Bundle savedInstanceState) {}
    protected void onStart() {}
    protected void onStop() {}
    protected void onDestroy() {}
    @Deprecated public void onBackPressed() {}
    public native void setContentView(android.view.View view);
    public native android.view.Window getWindow();
    public final native void requestPermissions(String[] permissions, int requestCode);
}
