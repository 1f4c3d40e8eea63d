package android.view;

public class Surface {

}
