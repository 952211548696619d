// Compile-time stand-in for React Native's ReactApplication, for docs/REACT_NATIVE.md's MainApplication; never packaged, never run.
package com.facebook.react;

/**
 * The interface a React Native app's Application implements. React Native's own declares the host
 * members the app template generates; the documented excerpt leaves them out, so this stub has none.
 */
public interface ReactApplication {}
