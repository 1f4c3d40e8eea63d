package androidx.webkit;

public interface ScriptHandler {
    void remove();
}
