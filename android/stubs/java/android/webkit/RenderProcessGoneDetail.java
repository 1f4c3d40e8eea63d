package android.webkit;

public abstract class RenderProcessGoneDetail {
    public abstract boolean didCrash();
}
