package android.content;

public class ContextWrapper extends Context {
    public ContextWrapper(Context base) {}
    public native Context getBaseContext();
    public native Context getApplicationContext();
    public native android.content.res.Resources getResources();
    public native SharedPreferences getSharedPreferences(String name, int mode);
    public native java.io.File getFilesDir();
    public native java.io.File getCacheDir();
    public native java.io.File getExternalFilesDir(String type);
    public native void startActivity(Intent intent);
    public native ComponentName startForegroundService(Intent service);
    public native boolean stopService(Intent service);
    public native boolean bindService(Intent service, ServiceConnection conn, int flags);
    public native void unbindService(ServiceConnection conn);
    public native int checkSelfPermission(String permission);
}
