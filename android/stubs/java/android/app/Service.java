package android.app;

public abstract class Service extends android.content.ContextWrapper {
    public Service() { super(null); }
    public void onCreate() {}
    public int onStartCommand(android.content.Intent intent, int flags, int startId) { return 0; }
    public abstract android.os.IBinder onBind(android.content.Intent intent);
    public void onDestroy() {}
    public void onTimeout(int startId, int fgsType) {}
    public final native void startForeground(int id, Notification notification);
    public final native void startForeground(int id, Notification notification, int foregroundServiceType);
    public final native void stopSelf();
    public static final int START_STICKY = 1;
    public static final int START_NOT_STICKY = 2;
}
