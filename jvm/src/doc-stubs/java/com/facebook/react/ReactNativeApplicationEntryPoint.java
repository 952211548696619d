// Compile-time stand-in for React Native's ReactNativeApplicationEntryPoint (React Native 0.80 and later), for docs/REACT_NATIVE.md; never packaged, never run.
package com.facebook.react;

import android.content.Context;

/** Where React Native's app template starts React Native from Application.onCreate. */
public final class ReactNativeApplicationEntryPoint {
    private ReactNativeApplicationEntryPoint() {}

    /**
     * Starts React Native for the app.
     *
     * @param context the application
     */
    public static void loadReactNative(Context context) {
        throw new UnsupportedOperationException("stub of com.facebook.react.ReactNativeApplicationEntryPoint");
    }
}
