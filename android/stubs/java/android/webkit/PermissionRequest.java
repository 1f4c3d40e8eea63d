package android.webkit;

public abstract class PermissionRequest {
    public abstract void deny();
}
