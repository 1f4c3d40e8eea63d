package android.app;

public class Notification {
    public static class Builder {
        public Builder(android.content.Context context, String channelId) {}
        public native Builder setSmallIcon(int icon);
        public native Builder setContentTitle(CharSequence title);
        public native Builder setContentText(CharSequence text);
        public native Builder setContentIntent(PendingIntent intent);
        public native Builder setAutoCancel(boolean autoCancel);
        public native Builder setOngoing(boolean ongoing);
        public native Notification build();
    }
}
