package android.content;

public class ComponentName {

}
