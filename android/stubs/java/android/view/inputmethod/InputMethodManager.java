package android.view.inputmethod;

public final class InputMethodManager {
    public native boolean hideSoftInputFromWindow(android.os.IBinder windowToken, int flags);
}
