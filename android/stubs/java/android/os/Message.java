package android.os;

public final class Message {
    public Object obj;
    public native void sendToTarget();
}
