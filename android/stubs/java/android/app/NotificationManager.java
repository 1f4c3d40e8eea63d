package android.app;

public class NotificationManager {
    public static final int IMPORTANCE_LOW = 2;
    public static final int IMPORTANCE_HIGH = 4;
    public native void createNotificationChannel(NotificationChannel channel);
    public native void notify(int id, Notification notification);
    public native void cancel(int id);
}
