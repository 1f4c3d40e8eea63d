package android.text;

public interface InputType {
    int TYPE_CLASS_TEXT = 1;
    int TYPE_TEXT_VARIATION_URI = 16;
    int TYPE_TEXT_VARIATION_PASSWORD = 128;
}
