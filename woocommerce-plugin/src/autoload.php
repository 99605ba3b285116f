<?php
/**
 * PSR-4 autoloader for the plugin's classes: `ServicePay\WooCommerce\Foo\Bar` lives in `src/Foo/Bar.php`.
 * Written by hand so the installable zip needs no Composer step.
 *
 * @package ServicePay\WooCommerce
 */

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

spl_autoload_register(
	static function ( string $class_name ): void {
		$prefix = 'ServicePay\\WooCommerce\\';
		if ( 0 !== strncmp( $class_name, $prefix, strlen( $prefix ) ) ) {
			return;
		}
		$relative = substr( $class_name, strlen( $prefix ) );
		$file     = __DIR__ . '/' . str_replace( '\\', '/', $relative ) . '.php';
		if ( is_file( $file ) ) {
			require_once $file;
		}
	}
);
