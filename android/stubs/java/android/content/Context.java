package android.content;

public abstract class Context {
    public static final int MODE_PRIVATE = 0;
    public abstract Context getApplicationContext();
    public abstract android.content.res.Resources getResources();
    public final native <T> T getSystemService(Class<T> serviceClass);
    public abstract SharedPreferences getSharedPreferences(String name, int mode);
    public abstract java.io.File getFilesDir();
    public abstract java.io.File getCacheDir();
    public abstract java.io.File getExternalFilesDir(String type);
    public abstract void startActivity(Intent intent);
    public abstract ComponentName startForegroundService(Intent service);
    public abstract boolean stopService(Intent service);
    public abstract boolean bindService(Intent service, ServiceConnection conn, int flags);
    public abstract void unbindService(ServiceConnection conn);
    public abstract int checkSelfPermission(String permission);
}
