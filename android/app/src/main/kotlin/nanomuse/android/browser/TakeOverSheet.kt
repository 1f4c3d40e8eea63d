package nanomuse.android.browser

import android.app.Activity
import android.content.ActivityNotFoundException
import android.content.Intent
import android.graphics.Color
import android.net.Uri
import android.os.Handler
import android.os.Looper
import android.util.TypedValue
import android.view.Gravity
import android.view.View
import android.view.ViewGroup
import android.view.inputmethod.InputMethodManager
import android.widget.Button
import android.widget.FrameLayout
import android.widget.LinearLayout
import android.widget.TextView
import android.widget.Toast

/**
 * The take-over sheet: slides the REAL page — the same WebView object the agent drives, not a
 * picture of it — up over the app, with the reason, an arrow that opens the URL in the system
 * browser, and Done. The user signs in with the phone's own keyboard, autofill and password
 * manager (the sheet is in the Activity's window, which takes input; the offscreen one does
 * not). Done moves the view back offscreen: nothing reloads, and the agent's next look shows
 * what the user left.
 *
 * [view] goes on top of the Activity's content. Everything here runs on the main thread.
 * [onDone] is the Done button: the caller tells the gateway `handed_back` (DeviceClient.handBack)
 * and then calls [hide].
 */
class TakeOverSheet(
    private val activity: Activity,
    private val browser: DeviceBrowser,
    private val onDone: () -> Unit,
) {
    private val main = Handler(Looper.getMainLooper())
    private val title = TextView(activity).apply {
        setTextSize(TypedValue.COMPLEX_UNIT_SP, 16f)
        setTextColor(Color.BLACK)
        maxLines = 2
    }
    private val hint = TextView(activity).apply {
        setTextSize(TypedValue.COMPLEX_UNIT_SP, 13f)
        setTextColor(Color.rgb(0x8a, 0x3b, 0x00))
        visibility = View.GONE
    }
    private val container = FrameLayout(activity)

    /** The sheet, full screen over the app; gone while hidden. */
    val view: FrameLayout = FrameLayout(activity).apply {
        visibility = View.GONE
        setBackgroundColor(Color.argb(0x66, 0, 0, 0))
        isClickable = true // nothing behind the sheet takes taps
    }

    var shown = false
        private set

    init {
        val open = Button(activity).apply {
            text = "↗"
            contentDescription = "Open this page in the system browser"
            setOnClickListener { openExternally() }
        }
        val done = Button(activity).apply {
            text = "Done"
            setOnClickListener { onDone() }
        }
        val header = LinearLayout(activity).apply {
            orientation = LinearLayout.HORIZONTAL
            gravity = Gravity.CENTER_VERTICAL
            setPadding(dp(16), dp(8), dp(8), dp(8))
            addView(title, LinearLayout.LayoutParams(0, ViewGroup.LayoutParams.WRAP_CONTENT, 1f))
            addView(open, LinearLayout.LayoutParams(ViewGroup.LayoutParams.WRAP_CONTENT, ViewGroup.LayoutParams.WRAP_CONTENT))
            addView(done, LinearLayout.LayoutParams(ViewGroup.LayoutParams.WRAP_CONTENT, ViewGroup.LayoutParams.WRAP_CONTENT))
        }
        val panel = LinearLayout(activity).apply {
            orientation = LinearLayout.VERTICAL
            setBackgroundColor(Color.WHITE)
            elevation = dp(8).toFloat()
            addView(header, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT))
            addView(hint, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT).apply {
                setMargins(dp(16), 0, dp(16), dp(8))
            })
            addView(container, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 0, 1f))
        }
        view.addView(panel, FrameLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT).apply {
            topMargin = dp(24)
        })
    }

    /** Slides the page up with [reason]; already up, only the reason changes. */
    fun show(reason: String?) {
        title.text = if (reason.isNullOrBlank()) "Your turn" else "Your turn — $reason"
        if (shown) return
        shown = true
        view.visibility = View.VISIBLE
        browser.showIn(container, activity) // the same WebView, moved: removeView + addView in this turn
        view.translationY = activity.resources.displayMetrics.heightPixels.toFloat()
        view.animate().translationY(0f).setDuration(250).start()
        main.post(watchUrl)
    }

    /** Takes the page down and back offscreen (after Done, or when the hold closed elsewhere). */
    fun hide() {
        if (!shown) return
        shown = false
        main.removeCallbacks(watchUrl)
        activity.getSystemService(InputMethodManager::class.java)
            ?.hideSoftInputFromWindow(view.windowToken, 0)
        browser.returnOffscreen()
        view.animate().translationY(view.height.toFloat()).setDuration(200).withEndAction {
            if (!shown) view.visibility = View.GONE
        }.start()
    }

    /** Back while the sheet is up: a step back in the page, when it has one. */
    fun back(): Boolean = shown && browser.goBackOnScreen()

    /**
     * Google refuses sign-in inside a WebView (`disallowed_useragent`, since 2021); the spec says
     * to tell the user rather than spoof. Checked while the sheet is up.
     */
    private val watchUrl = object : Runnable {
        override fun run() {
            if (!shown) return
            val host = browser.currentUrl()?.let { Uri.parse(it).host } ?: ""
            if (host == "accounts.google.com") {
                hint.text = "Google does not allow signing in inside an app's browser. For Google services, " +
                    "use an app password or the calendar's private address instead."
                hint.visibility = View.VISIBLE
            } else {
                hint.visibility = View.GONE
            }
            main.postDelayed(this, 1_000)
        }
    }

    private fun openExternally() {
        val url = browser.currentUrl()?.takeIf { it.startsWith("http://") || it.startsWith("https://") } ?: return
        try {
            activity.startActivity(Intent(Intent.ACTION_VIEW, Uri.parse(url)))
            Toast.makeText(activity, "A sign-in made in the browser stays there, not in nanoMuse's page.", Toast.LENGTH_LONG).show()
        } catch (e: ActivityNotFoundException) {
            Toast.makeText(activity, "No browser app to open it in.", Toast.LENGTH_SHORT).show()
        }
    }

    private fun dp(value: Int): Int =
        TypedValue.applyDimension(TypedValue.COMPLEX_UNIT_DIP, value.toFloat(), activity.resources.displayMetrics).toInt()
}
